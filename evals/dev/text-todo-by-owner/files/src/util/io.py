def read(path):
    # TODO(Carol): stream large files
    return open(path).read()
# TODO: nobody owns this one
