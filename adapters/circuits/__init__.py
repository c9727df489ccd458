"""Circuit translators: OpenQASM to a site's own gate set, through the libraries the sites' clients use."""
