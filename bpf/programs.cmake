# One hsns_bpf_program(<name>) per bpf/<name>.bpf.c.
