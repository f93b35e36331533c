# man: see top-level Makefile.am
