# One hsns_bpf_program(<name>) per bpf/<name>.bpf.c.
hsns_bpf_program(isolation)
hsns_bpf_program(roce_flow)
