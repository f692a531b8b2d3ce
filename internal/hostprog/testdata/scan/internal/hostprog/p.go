package hostprog

const Debootstrap = "debootstrap"
