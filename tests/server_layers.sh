#!/bin/sh
# server_layers.sh BUILD - the objects of server/ call one way, in the order
# server/api.h lists them (reply at the bottom, http.c on top): no object may
# use a symbol defined by one listed after it, so there is no circle of use
# (a router that is also the helpers' library). Checked on the compiled
# objects with nm, so a call through any header is caught; an object that
# is not in the list fails too, so that a new file takes its place in it
# (an object left from a source file since removed is passed over).
# Checked by tests/call_order.sh. Prints "server layers: N passed, N failed".
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
order="reply request service_store static routes_stateless routes_documents api deadline head
metrics http"
# call_order.sh takes the callers first: the list reversed
top=$(printf '%s\n' $order | sed '1!G;h;$!d')
exec sh "$root/tests/call_order.sh" "server layers" "$build" server $top
