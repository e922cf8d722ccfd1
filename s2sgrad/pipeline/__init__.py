"""The driver: one generated module, from the user's function through every stage to compiled code
(`driver.GradientModule`), with the user functions it calls.
"""
