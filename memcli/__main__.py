from memcli.entry import main

main()
