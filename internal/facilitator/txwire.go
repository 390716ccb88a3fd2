package facilitator

import (
	"encoding/base64"
	"errors"

	"github.com/mr-tron/base58"

	"github.com/exchangerebel/payability/internal/solana"
)

// maxTxBytes is Solana's packet limit for one serialized transaction.
const maxTxBytes = 1232

// wireTx is the part of a serialized Solana transaction (legacy or v0) the
// rail reads before any facilitator call: enough to refuse what is not a
// transaction at all, and to name the paying wallet when the facilitator
// does not.
type wireTx struct {
	signatures   int
	accountKeys  []string // static keys, base58
	instructions []wireInstruction
}

type wireInstruction struct {
	program  int   // index into the account keys
	accounts []int // indexes into the account keys (v0 lookups included)
	data     []byte
}

var errTx = errors.New("facilitator: not a Solana transaction")

type txReader struct {
	b   []byte
	off int
}

func (r *txReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTx
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *txReader) take(n int) ([]byte, error) {
	if n < 0 || r.off+n > len(r.b) {
		return nil, errTx
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out, nil
}

// compact reads a compact-u16 (the "shortvec" length prefix).
func (r *txReader) compact() (int, error) {
	v := 0
	for i := 0; i < 3; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errTx
}

// decodeTx reads the standard base64 text of a serialized transaction.
func decodeTx(text string) (wireTx, error) {
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(raw) == 0 || len(raw) > maxTxBytes {
		return wireTx{}, errTx
	}
	r := &txReader{b: raw}
	var tx wireTx
	if tx.signatures, err = r.compact(); err != nil || tx.signatures == 0 {
		return wireTx{}, errTx
	}
	if _, err := r.take(64 * tx.signatures); err != nil {
		return wireTx{}, err
	}
	first, err := r.byte()
	if err != nil {
		return wireTx{}, err
	}
	versioned := first&0x80 != 0
	if versioned {
		if first&0x7f != 0 { // only v0 exists
			return wireTx{}, errTx
		}
		if first, err = r.byte(); err != nil {
			return wireTx{}, err
		}
	}
	requiredSigs := int(first)
	if _, err := r.take(2); err != nil { // read-only signed, read-only unsigned
		return wireTx{}, err
	}
	if requiredSigs != tx.signatures {
		return wireTx{}, errTx
	}
	nkeys, err := r.compact()
	if err != nil || nkeys < requiredSigs {
		return wireTx{}, errTx
	}
	for range nkeys {
		k, err := r.take(32)
		if err != nil {
			return wireTx{}, err
		}
		tx.accountKeys = append(tx.accountKeys, base58.Encode(k))
	}
	if _, err := r.take(32); err != nil { // recent blockhash
		return wireTx{}, err
	}
	nins, err := r.compact()
	if err != nil {
		return wireTx{}, err
	}
	for range nins {
		var ins wireInstruction
		p, err := r.byte()
		if err != nil {
			return wireTx{}, err
		}
		ins.program = int(p)
		if ins.program >= nkeys {
			return wireTx{}, errTx
		}
		nacc, err := r.compact()
		if err != nil {
			return wireTx{}, err
		}
		idx, err := r.take(nacc)
		if err != nil {
			return wireTx{}, err
		}
		for _, i := range idx {
			ins.accounts = append(ins.accounts, int(i))
		}
		ndata, err := r.compact()
		if err != nil {
			return wireTx{}, err
		}
		if ins.data, err = r.take(ndata); err != nil {
			return wireTx{}, err
		}
		tx.instructions = append(tx.instructions, ins)
	}
	if versioned {
		nlookups, err := r.compact()
		if err != nil {
			return wireTx{}, err
		}
		for range nlookups {
			if _, err := r.take(32); err != nil {
				return wireTx{}, err
			}
			for range 2 { // writable, then read-only indexes
				n, err := r.compact()
				if err != nil {
					return wireTx{}, err
				}
				if _, err := r.take(n); err != nil {
					return wireTx{}, err
				}
			}
		}
	}
	if r.off != len(raw) {
		return wireTx{}, errTx
	}
	return tx, nil
}

// transferCheckedTag is the SPL Token instruction TransferChecked.
const transferCheckedTag = 12

// tokenAuthority returns the authority (the paying wallet) of the first
// top-level TransferChecked of the Token or Token-2022 program, "" if none.
func (tx wireTx) tokenAuthority() string {
	for _, ins := range tx.instructions {
		prog := tx.accountKeys[ins.program]
		if prog != solana.TokenProgram && prog != solana.Token2022Program {
			continue
		}
		if len(ins.data) < 10 || ins.data[0] != transferCheckedTag || len(ins.accounts) < 4 {
			continue
		}
		if a := ins.accounts[3]; a < len(tx.accountKeys) {
			return tx.accountKeys[a]
		}
	}
	return ""
}
