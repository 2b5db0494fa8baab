print("incident-scheduler: not built yet")
