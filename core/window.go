package core

// window returns the newest messages of msgs that fit maxMessages and
// maxBytes (0: no limit). It drops whole blocks, oldest first: a block
// is a message with the tool results that follow it, so a tool call is
// never separated from its results. The newest block is always kept.
func window(msgs []Message, maxMessages int, maxBytes int64) []Message {
	if maxMessages == 0 && maxBytes == 0 {
		return msgs
	}
	start := len(msgs)
	var bytes int64
	for start > 0 {
		// Find the start of the block that ends at start-1.
		b := start - 1
		for b > 0 && msgs[b].Role == RoleTool {
			b--
		}
		var size int64
		for i := b; i < start; i++ {
			size += msgs[i].Size()
		}
		fits := (maxMessages == 0 || len(msgs)-b <= maxMessages) &&
			(maxBytes == 0 || bytes+size <= maxBytes)
		if !fits && start < len(msgs) {
			break
		}
		bytes += size
		start = b
	}
	return msgs[start:]
}
