#version 450
layout(points) in;
layout(triangle_strip, max_vertices = 4) out;
in vec4 g_color[];
in float g_size[];
layout(binding = 0) uniform P { mat4 view; mat4 proj; float time; } p;
out vec4 f_color;
out vec2 f_uv;
void main() {
    const vec2 corners[4] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));
    for (int i = 0; i < 4; ++i) {
        f_color = g_color[0];
        f_uv = corners[i] * 0.5 + 0.5;
        gl_Position = p.proj * (gl_in[0].gl_Position + vec4(corners[i] * g_size[0], 0.0, 0.0));
        EmitVertex();
    }
    EndPrimitive();
}
