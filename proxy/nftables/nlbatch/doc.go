// Package nlbatch writes the operations of a partial nftables sync
// straight to the kernel as one nf_tables netlink batch: the messages nft
// 1.0.6 sends for the same text, attribute for attribute, without nft's
// cache fill. Before it adds a rule, nft reads every chain and set of
// every table into its cache (at 10,000 Services × 10 endpoints most of a
// one-endpoint sync); the kernel needs none of it for these operations.
//
// Compile takes a knftables transaction's text and returns a Batch only
// when every line is one it knows — adding, flushing or deleting a regular
// chain; a Service chain's `dnat … to numgen random mod N map { … }` rule
// and an external chain's `mark set mark or …` and `goto` rules, after an
// address or `fib saddr type local` match (externalTrafficPolicy Local);
// adding or deleting elements, with their comments, of a named set or
// verdict map whose type it was told (LearnSets) — and refuses everything
// else (session affinity's sets, source ranges' anonymous sets, a full
// sync), which the caller gives to nft as before.
// Conn is the kernel boundary: a NETLINK_NETFILTER socket of the dialing
// thread's network namespace, kept open; its Send is one sendmsg of the
// batch, as nft does, and the kernel's error for the first refused
// message, if any.
package nlbatch
