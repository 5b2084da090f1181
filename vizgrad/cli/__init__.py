"""The ``vizgrad`` command line (``vizgrad = vizgrad.cli.main:main``; ``python -m vizgrad``).

Commands stay thin: they parse arguments, call vizgrad's library code
(:mod:`vizgrad.debug`, :mod:`vizgrad.render`) and print with rich.
"""
