package nlbatch

import (
	"strings"

	"golang.org/x/sys/unix"
)

// maxBatchBytes bounds a batch to what a netlink socket's default send
// buffer takes in one message; a larger transaction goes to nft, which
// raises its buffer.
const maxBatchBytes = 128 << 10

// Batch is a compiled transaction: its nf_tables messages in order.
type Batch struct {
	family   uint8
	messages []message
	sets     uint32 // anonymous sets so far: the next one's NFTA_SET_ID
	size     int
}

// Messages is the number of nf_tables messages, the batch's delimiters
// left out.
func (b *Batch) Messages() int { return len(b.messages) }

// Bytes is the batch as one netlink datagram: NFNL_MSG_BATCH_BEGIN, the
// messages with sequence numbers from 1, NFNL_MSG_BATCH_END — as nft
// sends it.
func (b *Batch) Bytes() []byte {
	out := make([]byte, 0, b.size+64)
	out = appendMessage(out, unix.NFNL_MSG_BATCH_BEGIN, 0, 0, unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES, nil)
	for i, m := range b.messages {
		out = appendMessage(out, unix.NFNL_SUBSYS_NFTABLES<<8|m.typ, m.flags, uint32(i+1), b.family, 0, m.attrs)
	}
	return appendMessage(out, unix.NFNL_MSG_BATCH_END, 0, uint32(len(b.messages)+1), unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES, nil)
}

// line is the transaction's line of the message with sequence number seq.
func (b *Batch) line(seq uint32) string {
	if seq == 0 || int(seq) > len(b.messages) {
		return ""
	}
	return b.messages[seq-1].line
}

func (b *Batch) add(m message) {
	b.messages = append(b.messages, m)
	b.size += unix.SizeofNlMsghdr + 4 + len(m.attrs)
}

// families are the nft families Compile writes: the kube-proxy tables'.
var families = map[string]uint8{"ip": unix.NFPROTO_IPV4, "ip6": unix.NFPROTO_IPV6}

// Compile compiles the text of a transaction on table of family ("ip" or
// "ip6"), one operation per line as knftables writes it, given the types
// of the table's named sets and maps (LearnSets). ok is false unless every
// line is one it knows:
//
//	add chain FAMILY TABLE CHAIN
//	flush chain FAMILY TABLE CHAIN
//	delete chain FAMILY TABLE CHAIN
//	add rule FAMILY TABLE CHAIN meta l4proto P dnat FAMILY addr . port to numgen random mod N map { K : ADDR . PORT , … } [comment "…"]
//	add rule FAMILY TABLE CHAIN [MATCH] mark set mark or 0xHHHHHHHH [comment "…"]
//	add rule FAMILY TABLE CHAIN [MATCH] goto|jump CHAIN [comment "…"]
//	  (MATCH: FAMILY saddr|daddr ADDRESS[/BITS], or fib saddr type local)
//	add element FAMILY TABLE SET { KEY [comment "…"] [: VERDICT] }
//	delete element FAMILY TABLE SET { KEY [: VERDICT] }
//
// and the whole batch fits maxBatchBytes. The caller runs nft otherwise.
func Compile(family, table, text string, sets map[string]SetType) (*Batch, bool) {
	return compile(family, table, text, sets, 1)
}

// compile is Compile with the NFTA_SET_ID of the batch's first anonymous
// map given (nft numbers its sets from its cache; the tests match it).
func compile(family, table, text string, sets map[string]SetType, firstSetID uint32) (*Batch, bool) {
	fam, ok := families[family]
	if !ok || !validName(table) {
		return nil, false
	}
	b := &Batch{family: fam, sets: firstSetID - 1}
	// Line by line, so that a full sync's text (megabytes) is refused at
	// its first line, not split first.
	for rest := strings.TrimSuffix(text, "\n"); ; {
		line, more, found := strings.Cut(rest, "\n")
		if !compileLine(b, family, table, line, sets) || b.size > maxBatchBytes {
			return nil, false
		}
		if !found {
			break
		}
		rest = more
	}
	return b, len(b.messages) > 0
}

// compileLine appends the messages of one line.
func compileLine(b *Batch, family, table, line string, sets map[string]SetType) bool {
	verb, rest, _ := strings.Cut(line, " ")
	object, rest, _ := strings.Cut(rest, " ")
	lineFamily, rest, _ := strings.Cut(rest, " ")
	lineTable, rest, _ := strings.Cut(rest, " ")
	if lineFamily != family || lineTable != table {
		return false
	}
	switch verb + " " + object {
	case "add chain": // NFT_MSG_NEWCHAIN, created unless it exists
		return chainOperation(b, unix.NFT_MSG_NEWCHAIN, unix.NLM_F_CREATE, unix.NFTA_CHAIN_NAME, table, rest, line)
	case "flush chain": // NFT_MSG_DELRULE of the whole chain
		return chainOperation(b, unix.NFT_MSG_DELRULE, 0, unix.NFTA_RULE_CHAIN, table, rest, line)
	case "delete chain": // NFT_MSG_DELCHAIN: the stale chains of what is gone, flushed a sync before
		return chainOperation(b, unix.NFT_MSG_DELCHAIN, 0, unix.NFTA_CHAIN_NAME, table, rest, line)
	case "add rule":
		return addRule(b, family, table, rest, line)
	case "add element":
		return element(b, table, rest, line, sets, true)
	case "delete element":
		return element(b, table, rest, line, sets, false)
	}
	return false
}

// chainOperation appends the message of `add chain`, `flush chain` or
// `delete chain` of a regular chain: the table and the chain's name (in
// the attribute nameAttr of the message type) and nothing else.
func chainOperation(b *Batch, typ, flags, nameAttr uint16, table, chain, line string) bool {
	if !validName(chain) {
		return false
	}
	var a attrs
	a.str(unix.NFTA_CHAIN_TABLE, table) // NFTA_RULE_TABLE too
	a.str(nameAttr, chain)
	b.add(message{typ: typ, flags: flags, attrs: a.b, line: line})
	return true
}

// element is `add element … SET { ELEMENT }` (NFT_MSG_NEWSETELEM, created
// unless it exists) or `delete element` (NFT_MSG_DELSETELEM, the key
// alone; a map's element may be named by its key alone), of a set whose
// type sets holds; one element a line, as knftables writes them.
func element(b *Batch, table, rest, line string, sets map[string]SetType, add bool) bool {
	set, body, _ := strings.Cut(rest, " ")
	t, known := sets[set]
	if !known || !strings.HasPrefix(body, "{ ") || !strings.HasSuffix(body, " }") {
		return false
	}
	body = strings.TrimSuffix(strings.TrimPrefix(body, "{ "), " }")
	body, comment, ok := cutElementComment(body)
	if !ok || (comment != "" && !add) {
		return false
	}
	keyText, verdictText, hasVerdict := strings.Cut(body, " : ")
	if (hasVerdict != t.verdict && (add || hasVerdict)) || strings.Contains(body, ",") {
		return false
	}
	key, ok := t.encodeKey(keyText)
	if !ok || strings.Contains(body, `"`) {
		return false
	}
	var v verdict
	if hasVerdict {
		if v, ok = parseVerdict(verdictText); !ok {
			return false
		}
	}
	var a attrs
	a.str(unix.NFTA_SET_ELEM_LIST_TABLE, table)
	a.str(unix.NFTA_SET_ELEM_LIST_SET, set)
	a.nest(unix.NFTA_SET_ELEM_LIST_ELEMENTS, func(l *attrs) {
		l.nest(unix.NFTA_LIST_ELEM, func(e *attrs) {
			e.nest(unix.NFTA_SET_ELEM_KEY, func(k *attrs) { k.put(unix.NFTA_DATA_VALUE, key) })
			if add && hasVerdict {
				v.put(e)
			}
			if comment != "" {
				e.put(unix.NFTA_SET_ELEM_USERDATA, userdataComment(comment))
			}
		})
	})
	m := message{typ: unix.NFT_MSG_DELSETELEM, attrs: a.b, line: line}
	if add {
		m.typ, m.flags = unix.NFT_MSG_NEWSETELEM, unix.NLM_F_CREATE
	}
	b.add(m)
	return true
}

// cutElementComment takes `comment "TEXT"` out of an element's body
// (`KEY comment "TEXT" : VERDICT`, as knftables writes it); ok is false
// for a comment nft would not take back as written.
func cutElementComment(body string) (rest, comment string, ok bool) {
	i := strings.Index(body, ` comment "`)
	if i < 0 {
		return body, "", true
	}
	quoted := body[i+len(` comment "`):]
	end := strings.IndexByte(quoted, '"')
	if end <= 0 || end > maxCommentLen || strings.ContainsAny(quoted[:end], "\\\n") {
		return "", "", false
	}
	return body[:i] + quoted[end+1:], quoted[:end], true
}
