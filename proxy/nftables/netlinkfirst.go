package nftables

import (
	"context"
	"errors"

	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/nftables/nlbatch"
)

// NetlinkFirst is a knftables.Interface whose Run writes a transaction
// itself, as one nf_tables netlink batch (nlbatch), when it knows every
// line of it — a partial sync's chains flushed and rewritten and its set
// and map elements, the stale chains' deletion — and gives every other
// transaction (a full sync, anything new) to nft as before. The batch is
// the messages nft sends for the same text, without nft's cache fill: at
// 10,000 Services × 10 endpoints nft 1.0.6 reads every chain and set of
// the table before it adds a rule. Everything but Run is nft's.
type NetlinkFirst struct {
	knftables.Interface
	family knftables.Family
	// sets are the types of the table's named sets and maps, learned from
	// the transactions committed through nft (a full sync adds them all).
	sets map[string]nlbatch.SetType
	// conn is the netlink socket, dialed by the first batch (in the
	// network namespace of the thread that runs it) and kept.
	conn *nlbatch.Conn
	// Observe, if set, is told of each batch written over netlink: its
	// nf_tables messages.
	Observe func(messages int)
}

// NewNetlinkFirst wraps nft, the interface of family's kube-proxy table.
func NewNetlinkFirst(nft knftables.Interface, family knftables.Family) *NetlinkFirst {
	return &NetlinkFirst{Interface: nft, family: family, sets: map[string]nlbatch.SetType{}}
}

// Run commits tx over netlink if nlbatch compiles all of it, through nft
// otherwise; either way all of it or none.
func (n *NetlinkFirst) Run(ctx context.Context, tx *knftables.Transaction) error {
	text := tx.String()
	if batch, ok := nlbatch.Compile(string(n.family), TableName, text, n.sets); ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := n.send(batch)
		if n.Observe != nil {
			n.Observe(batch.Messages())
		}
		return err
	}
	if err := n.Interface.Run(ctx, tx); err != nil {
		return err
	}
	nlbatch.LearnSets(string(n.family), TableName, text, n.sets)
	return nil
}

// send writes the batch on the kept socket, dialing it first if need be;
// a socket that failed is closed, and the next batch dials again.
func (n *NetlinkFirst) send(batch *nlbatch.Batch) error {
	if n.conn == nil {
		conn, err := nlbatch.Dial()
		if err != nil {
			return err
		}
		n.conn = conn
	}
	err := n.conn.Send(batch)
	var socketErr *nlbatch.SocketError
	if errors.As(err, &socketErr) {
		n.Close()
	}
	return err
}

// Close closes the netlink socket, if one is open; a later batch opens
// another.
func (n *NetlinkFirst) Close() error {
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	return err
}
