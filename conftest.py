"""Test-session setup: the documented process-wide configuration, applied once, as a user's script does.

``import noiseaware`` changes nothing process-wide; the tests (and the doctests of the NumPyro
front end, whose distributions need float64) run as a script that called
``noiseaware.config.configure()`` first. ``tests/test_import_side_effects.py`` checks, in fresh
interpreters, that nothing is changed without it and that the fits scope float64 themselves.
"""

import noiseaware.config

noiseaware.config.configure()
