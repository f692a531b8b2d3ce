package iptables

import "bytes"

// ChainsFromSave lists the chains declared in one table's iptables-save
// output, built-in ones included, in the order they appear. Upstream:
// utiliptables.GetChainsFromTable.
func ChainsFromSave(save []byte) []string {
	var chains []string
	for len(save) > 0 {
		line := save
		if i := bytes.IndexByte(save, '\n'); i >= 0 {
			line, save = save[:i], save[i+1:]
		} else {
			save = nil
		}
		if len(line) < 2 || line[0] != ':' {
			continue
		}
		name := line[1:]
		if i := bytes.IndexByte(name, ' '); i >= 0 {
			name = name[:i]
		}
		chains = append(chains, string(name))
	}
	return chains
}
