"""One builder per benchmark family. Each module registers a :class:`dialshift.registry.Family` on import."""
