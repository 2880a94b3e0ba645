import VMergeCLI

VMergeCLI.main()
