package whatsapp

import "github.com/msgbridge/msgbridge/contract"

// SetDiskLow stops the link while DATA_DIR's disk is below its reserve and
// starts it again once it is not (the disk guard's OnChange). Receiving
// must stop before a message reaches whatsmeow's decrypt: the decrypt
// writes the Signal session to session.db, and when that write fails
// whatsmeow acks the message anyway and it is lost. Disconnecting is the
// only way the pinned whatsmeow allows: nothing is read from the socket of
// a disconnected client, and WhatsApp keeps what it could not deliver for
// the next login.
func (m *Session) SetDiskLow(low bool) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.diskLow.Swap(low) == low {
		return
	}
	if low {
		m.apply(diskLow{})
		m.client.Load().Disconnect()
		return
	}
	if m.linked.Load() && m.Status().Reason == contract.ReasonDiskFull {
		m.connect()
	}
}

// stopIfDiskLow ends a login that raced the disk guard (a reconnect that
// whatsmeow had already begun); it runs on its own goroutine, since an event
// handler must not wait for an operation that waits for whatsmeow.
func (m *Session) stopIfDiskLow() {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.diskLow.Load() {
		m.apply(diskLow{})
		m.client.Load().Disconnect()
	}
}
