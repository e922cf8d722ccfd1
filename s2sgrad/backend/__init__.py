"""From generated syntax to the code that runs: clean-up passes (`forward_tidy`, `vectorize`,
`peephole`, `coalesce`) and printing and compiling (`codegen`).
"""
