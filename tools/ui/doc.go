// Package ui is `svclab ui`: a local web page that shows a lab live on a
// classroom projector — its topology (labs/netns/graph's SVG), each node's Service
// chains with their packet counters (`iptables-save -c -t nat` in the node's
// namespace, and `ip6tables-save -c -t nat` on an ipv6 or dual lab, its
// chains marked IPv6; in IPVS mode `ipvsadm -Ln --stats --exact`, both
// families), the last `svclab trace` picture the lab's store holds, and a
// button that sends a bounded traffic run from the lab's client to a
// Service — to each cluster IP of a dual-stack one — and draws the split
// (labs/agents/traffic/bars). In nftables mode the page reads the same
// iptables-save; the kube-proxy nftables tables, whose rules carry no
// counters (as upstream's), are not shown.
//
// The page is self-contained (HTML, CSS and JavaScript embedded in the
// binary; nothing from a CDN) and polls GET /api/state. What the lab's
// store holds (objects, proxies' statuses, the last trace) is read on
// every request; the nodes' kernels — a command as root in every node —
// are read at most once a second, one reading at a time shared by every
// request that waits for it, and again as soon as the store records a
// change or the page has sent traffic (kernelCache).
//
// Because svclab runs as root and other users share the machine, the
// server listens on 127.0.0.1 only (CheckListen refuses any other
// address), answers only requests whose Host is the bound address (no DNS
// rebinding), and shows the lab only to the browser that opened the link
// `svclab ui` printed: its token, after "#", is never sent in a page; the
// page trades it (POST /api/session) for an HttpOnly, SameSite=Strict
// cookie that every other /api/ request needs, and takes it off the
// address bar. A POST must also come from the page's origin with a JSON
// body. Connections are bounded in number and time, bodies and traffic
// counts in size.
//
// The pure parts — the view models, the parsers of iptables-save and
// ipvsadm output, the list of Services traffic may go to — are unit-tested
// on whole outputs; the page itself is tested in headless Chromium on a
// real lab (TestIntegrationPageInChromium) and on a real dual-stack lab
// (TestIntegrationPageDualStack).
package ui
