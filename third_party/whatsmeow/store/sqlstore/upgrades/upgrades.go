// Copyright (c) 2025 Tulir Asokan
//
// This Source Code Form is subject to the terms of the Mozilla Public
// License, v. 2.0. If a copy of the MPL was not distributed with this
// file, You can obtain one at http://mozilla.org/MPL/2.0/.

package upgrades

import (
	"embed"
	"sync"

	"go.mau.fi/util/dbutil"
)

// Table is the store's upgrade table, read from the embedded files at its
// first use rather than at program start.
var Table = sync.OnceValue(func() dbutil.UpgradeTable {
	var table dbutil.UpgradeTable
	table.RegisterFS(upgrades)
	return table
})

//go:embed *.sql
var upgrades embed.FS
