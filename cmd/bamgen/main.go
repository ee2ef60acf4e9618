// Command bamgen ports CUDA kernels to BaM (bam::array over a GPU software
// cache in front of NVMe storage). See README.md.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }
