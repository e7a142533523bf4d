"""The real-server tier: toolwire's Agent against real llama.cpp servers.

Not part of ``make test``: ``make test-llamacpp`` builds the servers once from
the llama-cpp-python source package on PyPI (see :mod:`tests.realservers.build`),
then runs this package with ``pytest --realservers``.
"""
