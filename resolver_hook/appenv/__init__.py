"""An application's whole GPU environment: declared, planned pass by pass, created with uv.

:mod:`~resolver_hook.appenv.declaration` reads ``[tool.resolver-hook.env]``;
:mod:`~resolver_hook.appenv.plan` turns it into the passes for one machine (pure);
:mod:`~resolver_hook.appenv.create` makes the venv with uv and runs the passes through
the install session, the plan's constraints on every pass.
"""
