"""One module per ``dialshift`` sub-command; each defines ``register(subparsers)``."""
