# blkbackd: see top-level Makefile.am
