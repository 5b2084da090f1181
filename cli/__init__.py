"""The ``vizgrad`` command line (installed as the package ``vizgrad_cli``).

Commands stay thin: they parse arguments, call vizgrad's library code
(:mod:`vizgrad.debug`, :mod:`vizgrad.render`) and print with rich.
"""
