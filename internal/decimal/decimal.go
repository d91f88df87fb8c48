// Package decimal formats integers in decimal without strconv, whose tables
// would grow the module that phones download. core, the packed history
// decoder and the JavaScript edge share it.
package decimal

// Itoa returns n in decimal.
func Itoa(n int) string {
	if n == 0 {
		return "0"
	}
	// Work on the negative value so that the most negative int has no
	// positive counterpart to overflow into.
	neg := n < 0
	if !neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n < 0 {
		i--
		b[i] = byte('0' - n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
