package proxy

import (
	"time"
)

// StateTransfer is a joining node's state transfer as the control plane
// reports it (see package transfer), for the admin table
// state_transfers.
type StateTransfer struct {
	Node, Kind, Donor string
	// Done and Total are bytes (SST) or write-sets (IST); Total 0 and
	// Percent -1 when unknown, ETA -1 when unknown.
	Done, Total int64
	Percent     float64
	Rate        float64
	ETA         time.Duration
	Since       time.Time
}

// SetStateTransfers replaces the transfers in progress.
func (p *Proxy) SetStateTransfers(ts []StateTransfer) {
	p.transfers.Store(&ts)
}
