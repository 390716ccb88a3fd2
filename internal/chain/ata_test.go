package chain

import "testing"

func mustKey(t *testing.T, s string) [32]byte {
	t.Helper()
	k, ok := key(s)
	if !ok {
		t.Fatalf("%s is not a key", s)
	}
	return k
}

// TestAssociatedTokenAddress: vectors computed by @solana-program/token's
// findAssociatedTokenPda (npm, the interop suite's dependency tree), for the
// Token and the Token-2022 programs.
func TestAssociatedTokenAddress(t *testing.T) {
	for _, v := range ataVectors {
		got, err := AssociatedTokenAddress(mustKey(t, v.owner), mustKey(t, v.program), mustKey(t, v.mint))
		if err != nil {
			t.Fatal(err)
		}
		if Base58(got) != v.ata {
			t.Errorf("ATA(%s, %s, %s) = %s, want %s", v.owner, v.program, v.mint, Base58(got), v.ata)
		}
		if onCurve(got) {
			t.Errorf("%s is on the curve", v.ata)
		}
	}
}

var ataVectors = []struct{ owner, mint, program, ata string }{
	{"5waJka9MrCgPFoLo3SQSjLDTGnkoDcwYYPnpk4YNJS6i", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", TokenProgram, "HmBpVD6N1vuGvQpS8KrwWH6Tr8rSwXQBEDKn5VXW6yyw"},
	{"5waJka9MrCgPFoLo3SQSjLDTGnkoDcwYYPnpk4YNJS6i", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", Token2022Program, "BvA4Rps6ygi7A7HRy17xTdUE9bQp4x3ExEus3gtKDCBC"},
	{"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", TokenProgram, "3XZXfFJHF5ox3yPop16oqYfSWxLpkjsEuvTe2S67G2rj"},
	{"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", Token2022Program, "H7BrdQ48x8XkXh3UXs7pvPxxF8Z5Ej1WyBwU2ZryzTBL"},
	{"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", TokenProgram, "GqfKG7dvFDig2q1GUcvBxPtb7nAs1FVn31G1mcpR6xkM"},
	{"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", Token2022Program, "2LQkUpsKVViPrQ5eALEUB7xGoYTNh1a44K8YfgfRZbjA"},
}

func TestOnCurve(t *testing.T) {
	// An ed25519 public key is on the curve; the system program's all-zero
	// key (y = 0) also decodes to a point.
	if !onCurve(mustKey(t, "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd")) && !onCurve([32]byte{1}) {
		t.Error("no key decodes")
	}
	if onCurve(mustKey(t, "HmBpVD6N1vuGvQpS8KrwWH6Tr8rSwXQBEDKn5VXW6yyw")) {
		t.Error("a PDA is on the curve")
	}
}
