#!/bin/sh
# `blkbackctl metrics --http`, as blkbackd-metrics.socket runs it (one
# process per connection, the connection as stdin and stdout): a real HTTP
# client on a real TCP connection gets 200 with the Prometheus text type
# and metrics the Prometheus parser reads, with the guest's requests in
# them; another path gets 404, another method 405, and a daemon that does
# not answer 503. The units are checked by tests/unit-security.sh.
. "$top_srcdir/tests/lib.sh"
requires_prometheus_parser
xensim_setup
start_daemon
CTL=$top_builddir/tools/blkbackctl/blkbackctl

guest 1 16M
attach 1
# Counters are per connection: scraped while the guest is at work.
blkfront_bg 1 --seconds 6 --depth 4 --verify
wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 1

"$PY" - "$CTL" "$WORK/state/control" "$WORK/nothing" <<'PY' ||
import socket, subprocess, sys, threading, urllib.error, urllib.request
from prometheus_client.parser import text_string_to_metric_families

ctl, control, missing = sys.argv[1:4]

def scrape(method="GET", path="/metrics", socket_path=control):
    """One connection, served as systemd's Accept=yes would."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    def serve():
        conn, _ = srv.accept()
        subprocess.run([ctl, "--socket", socket_path, "metrics", "--http"],
                       stdin=conn, stdout=conn, timeout=20)
        conn.close()
    t = threading.Thread(target=serve)
    t.start()
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            result = (r.status, r.headers.get("Content-Type"), r.read().decode())
    except urllib.error.HTTPError as e:
        result = (e.code, e.headers.get("Content-Type"), e.read().decode())
    t.join()
    srv.close()
    return result

status, ctype, body = scrape()
if status != 200 or not ctype.startswith("text/plain; version=0.0.4"):
    sys.exit("GET /metrics: %s %s" % (status, ctype))
reads = None
for fam in text_string_to_metric_families(body):
    for s in fam.samples:
        if (s.name == "blkbackd_requests_total" and s.labels["op"] == "read"
                and s.labels["domid"] == "1"):
            reads = s.value
if not reads:
    sys.exit("GET /metrics: no reads of dom 1 counted in:\n" + body)
for method, path, want in (("GET", "/", 404), ("POST", "/metrics", 405)):
    status = scrape(method, path)[0]
    if status != want:
        sys.exit("%s %s: %s, wanted %s" % (method, path, status, want))
if scrape(socket_path=missing)[0] != 503:
    sys.exit("a daemon that does not answer is not 503")
print("scraped %d reads of dom 1" % reads)
PY
	fail "the HTTP exchange is wrong"
blkfront_wait 1 "$BG_PID"
assert_daemon_alive
exit 0
