# tests: see top-level Makefile.am
