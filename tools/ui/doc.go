// Package ui is `svclab ui`: a local web page that shows a lab live on a
// classroom projector — its topology (labs/graph's SVG), each node's Service
// chains with their packet counters (`iptables-save -c -t nat` in the node's
// namespace; in IPVS mode `ipvsadm -Ln --stats --exact`), the last
// `svclab trace` picture the lab's store holds, and a button that sends a
// bounded traffic run from the lab's client to a Service and draws the split
// (labs/traffic/bars).
//
// The page is self-contained (HTML, CSS and JavaScript embedded in the
// binary; nothing from a CDN) and polls GET /api/state. Because svclab
// runs as root, the server listens on 127.0.0.1 only (CheckListen refuses
// any other address), answers only requests whose Host is the bound address
// (no DNS rebinding), and takes a POST only with the page's token and, when
// the browser sends one, an Origin of the bound address (no cross-site
// requests); request bodies and traffic counts are bounded.
//
// The pure parts — the view models, the parsers of iptables-save and
// ipvsadm output, the list of Services traffic may go to — are unit-tested
// on whole outputs; the page itself is tested in headless Chromium on a
// real lab (TestIntegrationPageInChromium).
package ui
