package iptables

// ResultOfParts is a Result whose payload is parts, for tests of
// kernel.StreamRestorer with payloads the renderer would not write.
func ResultOfParts(parts ...[]byte) *Result {
	res := &Result{parts: parts}
	for _, p := range parts {
		res.size += len(p)
	}
	return res
}
