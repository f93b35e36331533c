# man: pages for the daemon, its configuration file, its hotplug script and
# blkbackctl (installed), and for the simulated hypervisor used by the tests
# (distributed, not installed, since xensim itself is not installed).
dist_man_MANS += man/blkbackd.8 man/blkbackd.conf.5 man/blkbackd-hotplug.8 \
	man/blkbackctl.8 man/blkbackd-takeover.8
EXTRA_DIST += man/xensim.1
