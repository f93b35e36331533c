# tools/xensim: see top-level Makefile.am
