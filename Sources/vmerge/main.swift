import VMergeCLI
VMergeCLI.main()
