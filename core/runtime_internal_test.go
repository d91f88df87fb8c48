package core

import "testing"

func TestMaxIDBytesText(t *testing.T) {
	if maxIDBytesText != itoa(MaxIDBytes) {
		t.Fatalf("maxIDBytesText = %q, MaxIDBytes = %d", maxIDBytesText, MaxIDBytes)
	}
}
