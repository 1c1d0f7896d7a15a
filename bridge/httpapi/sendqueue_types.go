package httpapi

import (
	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// queueRequest is the queue's request for items to recipient.
func queueRequest(recipient bridge.Recipient, items []sendItem) sendqueue.Request {
	req := sendqueue.Request{Recipient: recipient, Items: make([]sendqueue.Item, len(items))}
	for i, it := range items {
		req.Items[i] = sendqueue.Item{Type: it.typ, Text: it.text, File: it.file}
	}
	return req
}
