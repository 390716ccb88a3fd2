-- The CAIP-2 network of the entry a preflight selected (the entry whose
-- terms hash the row carries), so the reliability record names the network
-- its terms_sha256 is bound to; '' for the other ops and when no entry was
-- selected. A protocol identifier, never fetched content.
ALTER TABLE observations ADD COLUMN network TEXT NOT NULL DEFAULT '' CHECK (length(network) <= 41);
