package roottest

import "crypto/rand"

// UniqueName returns a lab name that no other run uses: prefix + 5 random
// lowercase characters.
func UniqueName(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return prefix + "-" + string(b)
}
