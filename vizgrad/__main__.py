"""``python -m vizgrad`` is the ``vizgrad`` command (:mod:`vizgrad.cli`)."""

from vizgrad.cli.main import main

if __name__ == "__main__":
    main()
