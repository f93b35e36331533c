# tools: see top-level Makefile.am
