# see top-level Makefile.am
