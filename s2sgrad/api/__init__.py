"""The public functions: `grad`, `value_and_grad`, `vjp`, `source`, `check_grad` (`reverse`); `jvp`, `hvp`,
`hessian` (`forward`); every transform of a derivative s2sgrad made (`derivatives`); and the generated code
they run, cached (`generation`).
"""
