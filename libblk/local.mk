# libblk: see top-level Makefile.am
