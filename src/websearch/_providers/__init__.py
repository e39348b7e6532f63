"""Provider modules, one per search provider; loaded lazily through `websearch._core._registry`."""
