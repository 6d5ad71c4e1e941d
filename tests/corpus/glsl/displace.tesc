#version 450
layout(vertices = 4) out;
in vec3 c_normal[];
in vec2 c_uv[];
out vec3 e_normal[];
out vec2 e_uv[];
layout(binding = 0) uniform Tess { float outer; float inner; } t;
void main() {
    e_normal[gl_InvocationID] = c_normal[gl_InvocationID];
    e_uv[gl_InvocationID] = c_uv[gl_InvocationID];
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    barrier();
    if (gl_InvocationID == 0) {
        for (int i = 0; i < 4; ++i) gl_TessLevelOuter[i] = t.outer;
        gl_TessLevelInner[0] = t.inner;
        gl_TessLevelInner[1] = t.inner;
    }
}
