package nlbatch

import (
	"strings"

	"golang.org/x/sys/unix"
)

// maxNameLen is the kernel's limit on a chain's or set's name, its NUL
// included (NFT_CHAIN_MAXNAMELEN, NFT_SET_MAXNAMELEN).
const maxNameLen = 256

// validName reports whether s can be a chain's or set's name on an nft
// line: printable ASCII without spaces or quotes, within the kernel's
// length (which the kernel checks too).
func validName(s string) bool {
	if s == "" || len(s) >= maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '{' || c == '}' || c == ';' {
			return false
		}
	}
	return true
}

// The netfilter verdicts a map element can hold besides a jump or goto
// (NF_DROP, NF_ACCEPT).
const (
	verdictDrop   = 0
	verdictAccept = 1
)

// verdict is a verdict map element's data: drop, accept, or a jump or goto
// to a chain.
type verdict struct {
	code  int32
	chain string
}

// parseVerdict reads "goto CHAIN", "jump CHAIN", "drop" or "accept".
func parseVerdict(text string) (verdict, bool) {
	word, chain, hasChain := strings.Cut(text, " ")
	switch {
	case word == "drop" && !hasChain:
		return verdict{code: verdictDrop}, true
	case word == "accept" && !hasChain:
		return verdict{code: verdictAccept}, true
	case (word == "goto" || word == "jump") && validName(chain):
		code := int32(unix.NFT_GOTO)
		if word == "jump" {
			code = unix.NFT_JUMP
		}
		return verdict{code: code, chain: chain}, true
	}
	return verdict{}, false
}

// put puts the verdict as a map element's data (NFTA_SET_ELEM_DATA).
func (v verdict) put(a *attrs) {
	a.nest(unix.NFTA_SET_ELEM_DATA, func(d *attrs) {
		d.nest(unix.NFTA_DATA_VERDICT, func(vd *attrs) {
			vd.u32(unix.NFTA_VERDICT_CODE, uint32(v.code))
			if v.chain != "" {
				vd.str(unix.NFTA_VERDICT_CHAIN, v.chain)
			}
		})
	})
}
