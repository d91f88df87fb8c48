package decimal_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/internal/decimal"
)

func TestItoa(t *testing.T) {
	for _, n := range []int{0, 1, -1, 9, 10, 99, 100, 12345, -987654321, math.MaxInt, math.MinInt} {
		if got, want := decimal.Itoa(n), strconv.Itoa(n); got != want {
			t.Errorf("Itoa(%d) = %q, want %q", n, got, want)
		}
	}
}
