# A paged-attention read computes the block offset from the token count, and for the last,
# partial block it reads one whole 64 KiB block past the end of the 1 MiB block table
# (index 16 of blocks 0..15). A footprint must stay inside its region, whatever indices it uses.
# Nothing writes the bytes past the table either, so the read sees garbage (FX-INIT-001).
policy "block-index-out-of-bounds"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region kv_pages in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16

flow decode {
  edge fill: write kv_pages by gpu0.launch stream compute
  edge attend: read kv_pages[16 * 64 KiB, +64 KiB] by gpu0.launch stream compute  # expect: FX-ALIAS-003, FX-INIT-001
  # ^ `attend` reads byte 0x60100000 of space `hbm0`, which no edge writes before it
  # ^ `attend` touches 0x60100000, past the end of region `kv_pages`
}
