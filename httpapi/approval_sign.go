package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/agentrt/agentrt/core"
)

// ApprovalSigner returns a core.Config.SignApproval for a server whose
// history comes from clients it does not trust
// (docs/adr/0023-approval-trust.md): the signature of a call is the
// HMAC-SHA256, keyed with secret, of the session id, the call's id, its
// tool's name and its arguments (each preceded by its length as 8 bytes,
// so that no two calls write the same bytes), in unpadded base64url. The
// API renders it on the paused result's pendingApprovals and on the call
// in its messages, and reads it back from an approval's "signature" or
// from the call in the history's last message. A nil or empty secret
// returns nil: nothing is signed and no resume is checked.
func ApprovalSigner(secret []byte) func(sessionID string, call core.ToolCall) string {
	if len(secret) == 0 {
		return nil
	}
	key := append([]byte(nil), secret...)
	return func(sessionID string, call core.ToolCall) string {
		mac := hmac.New(sha256.New, key)
		var n [8]byte
		for _, s := range [...]string{sessionID, call.ID, call.Name, call.Arguments} {
			binary.BigEndian.PutUint64(n[:], uint64(len(s)))
			mac.Write(n[:])
			mac.Write([]byte(s))
		}
		return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
}

// trustKey marks a request context whose run's history is the server's
// own storage (TrustHistory).
type trustKey struct{}

// TrustHistory returns ctx marked so that the run of a request served
// with it takes the body's history as the server's own record of the
// conversation, not a client's (core.RunRequest.HistoryTrusted): a
// durable deployment that put its stored messages in the body. A cold
// resume of their pending calls then needs no signature.
func TrustHistory(ctx context.Context) context.Context {
	return context.WithValue(ctx, trustKey{}, true)
}

func historyTrusted(ctx context.Context) bool {
	v, _ := ctx.Value(trustKey{}).(bool)
	return v
}
